import { parse } from "sh-syntax";
const f = await parse(`ls -la notes/ && echo $(id) > x`);
const c = f.Stmts[0].Cmd;
console.log(Object.keys(c), c.constructor?.name);
console.log(JSON.stringify(c, (k,v)=> (k==='Pos'||k==='End'||k==='Position')?undefined:v).slice(0,3000));
